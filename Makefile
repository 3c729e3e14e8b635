# Two commands matter on a fresh machine: `make run` (serve on the embedded SQLite store at
# http://127.0.0.1:8000) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Serving needs the server and the etcd client only (about 360 MB, half of it pyarrow, which
# reads and writes a warehouse on S3); everything else (Spark, the test and dev tools) comes
# with `make test`.
SERVE_EXTRAS := etcd,api
SERVE_STAMP := $(VENV)/.serve-installed
STAMP := $(VENV)/.installed

.PHONY: run test engines browser chaos check lint typecheck format bench bench-quick bench-tools clean

$(SERVE_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[$(SERVE_EXTRAS)]'
	touch $(SERVE_STAMP)

$(STAMP): $(SERVE_STAMP)
	$(BIN)/pip install --quiet -e '.[etcd,api,spark,test,dev]'
	touch $(STAMP)

run: $(SERVE_STAMP)
	$(BIN)/catalog serve --host 127.0.0.1 --port 8000

test: $(STAMP) browser engines
	$(BIN)/pytest -q

# The engine tests (tests/integration/engines) run real engines on the Iceberg REST endpoint;
# what they need beyond the `test` extra (DuckDB) is fetched here once into .cache/ (about
# 750 MB; Maven Central and PyPI). Iceberg 1.12.0 ships Spark runtimes up to Spark 4.1, so its
# Spark is PySpark 4.1 installed beside the project's. Trino 476 runs on a JDK 24 or newer
# (the tests find one under /usr/lib/jvm, or TRINO_JAVA_HOME).
ENGINES := .cache
ICEBERG_SPARK_JAR := $(ENGINES)/jars/iceberg-spark-runtime-4.1_2.13-1.12.0.jar
# Iceberg's S3FileIO (the warehouse on S3) needs the AWS SDK: Iceberg's bundle of it.
ICEBERG_AWS_JAR := $(ENGINES)/jars/iceberg-aws-bundle-1.12.0.jar
ICEBERG_PYSPARK := $(ENGINES)/pyspark-4.1/.installed
TRINO_VERSION := 476
TRINO := $(ENGINES)/trino/trino-server-core-$(TRINO_VERSION)/plugin/iceberg

# Keycloak (Maven Central's keycloak-quarkus-dist) is the outside identity provider the
# sign-in tests run; it too runs on the newer JDK.
KEYCLOAK_VERSION := 26.7.3
KEYCLOAK := $(ENGINES)/keycloak/keycloak-$(KEYCLOAK_VERSION)/bin/kc.sh

engines: $(ICEBERG_SPARK_JAR) $(ICEBERG_AWS_JAR) $(ICEBERG_PYSPARK) $(TRINO) $(KEYCLOAK)

$(KEYCLOAK):
	rm -rf $(ENGINES)/keycloak
	mvn -q dependency:copy -Dartifact=org.keycloak:keycloak-quarkus-dist:$(KEYCLOAK_VERSION):zip \
		-DoutputDirectory=$(ENGINES)/keycloak
	cd $(ENGINES)/keycloak && $(PYTHON) -m zipfile -e keycloak-quarkus-dist-$(KEYCLOAK_VERSION).zip .
	chmod +x $(ENGINES)/keycloak/keycloak-$(KEYCLOAK_VERSION)/bin/*.sh
	rm $(ENGINES)/keycloak/*.zip

$(ICEBERG_SPARK_JAR):
	mvn -q dependency:copy -Dartifact=org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0 \
		-DoutputDirectory=$(ENGINES)/jars

$(ICEBERG_AWS_JAR):
	mvn -q dependency:copy -Dartifact=org.apache.iceberg:iceberg-aws-bundle:1.12.0 \
		-DoutputDirectory=$(ENGINES)/jars

$(ICEBERG_PYSPARK): | $(STAMP)
	rm -rf $(ENGINES)/pyspark-4.1
	$(BIN)/pip install --quiet --no-deps --target $(ENGINES)/pyspark-4.1 'pyspark==4.1.4'
	touch $@

$(TRINO):
	rm -rf $(ENGINES)/trino
	mvn -q dependency:copy -Dartifact=io.trino:trino-server-core:$(TRINO_VERSION):tar.gz \
		-DoutputDirectory=$(ENGINES)/trino
	mvn -q dependency:copy -Dartifact=io.trino:trino-iceberg:$(TRINO_VERSION):zip \
		-DoutputDirectory=$(ENGINES)/trino
	tar xzf $(ENGINES)/trino/trino-server-core-$(TRINO_VERSION).tar.gz -C $(ENGINES)/trino
	cd $(ENGINES)/trino && $(PYTHON) -m zipfile -e trino-iceberg-$(TRINO_VERSION).zip . && \
		mv trino-iceberg-$(TRINO_VERSION) trino-server-core-$(TRINO_VERSION)/plugin/iceberg
	rm $(ENGINES)/trino/*.tar.gz $(ENGINES)/trino/*.zip

# The catalog browser's tests drive a real headless Chromium: Debian's chromium and
# chromium-driver, installed here when missing (apt-get needs root, as on CI machines).
browser:
	@command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || \
		(apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 || \
		 (apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null))

# The chaos tests (tests/chaos) also run in `make test`, each with a short load; this runs
# only them, longer, and shows the figures they print (operations, faults, unavailability).
CHAOS_SECONDS ?= 120
chaos: $(STAMP)
	CATALOG_CHAOS_SECONDS=$(CHAOS_SECONDS) $(BIN)/pytest -q -s -m chaos -o timeout=1800

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy catalog updatelog schemasync api spark tests bench deploy

check: lint typecheck test

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# P9 loads the REST server with wrk (Debian package), installed here when missing; where it
# cannot be installed, P9 is skipped with a line saying so and the other figures still run.
# P14 runs Spark with Iceberg's runtime (the engines above) on this catalog and on Iceberg's
# JdbcCatalog over SQLite, whose JDBC driver (sqlite-jdbc, Maven Central) is fetched here.
SQLITE_JDBC_JAR := $(ENGINES)/jars/sqlite-jdbc-3.50.3.0.jar

$(SQLITE_JDBC_JAR):
	mvn -q dependency:copy -Dartifact=org.xerial:sqlite-jdbc:3.50.3.0 -DoutputDirectory=$(ENGINES)/jars

bench-tools: $(ICEBERG_SPARK_JAR) $(ICEBERG_PYSPARK) $(SQLITE_JDBC_JAR)
	@command -v wrk >/dev/null 2>&1 || \
		(apt-get install -y -qq wrk >/dev/null 2>&1 || \
		 (apt-get update -qq && apt-get install -y -qq wrk >/dev/null 2>&1)) || \
		echo "wrk could not be installed (apt-get install wrk needs root): P9 will be skipped"

bench: $(STAMP) bench-tools
	$(BIN)/python -m bench $(BENCH_ARGS)

bench-quick: $(STAMP) bench-tools
	$(BIN)/python -m bench --quick $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache
