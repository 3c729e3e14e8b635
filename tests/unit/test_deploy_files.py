"""The deploy files cannot run here (no Docker, no Kubernetes): check them against the code.

Every manifest parses; the ports, the ``CATALOG_*`` variables, the probe paths and the
image's entrypoint agree with ``api/server/config.py``, ``api/server/app.py`` and ``api/cli/``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from api.cli import build_parser
from api.server.app import create_app
from api.server.config import ServerSettings
from updatelog.url import EtcdUrl, parse_store_url

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
CONFIG_SOURCE = (DEPLOY.parent / "api" / "server" / "config.py").read_text()
ENV_NAMES = set(re.findall(r'"(CATALOG_[A-Z_]+)"', CONFIG_SOURCE))
PROBE_PATHS = {"/readyz", "/healthz"}


def _load_all(name: str) -> list[dict[str, Any]]:
    with (DEPLOY / name).open() as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def _by_kind(name: str) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in _load_all(name)}


def _routes() -> set[str]:
    """Return the paths the app serves (from its OpenAPI document: routers load lazily)."""
    app = create_app(ServerSettings(store="sqlite:///unused.db"))
    return set(app.openapi()["paths"])


def _default_port() -> int:
    field = next(f for f in dataclasses.fields(ServerSettings) if f.name == "port")
    assert field.default_factory is not dataclasses.MISSING
    return int(field.default_factory())


def _check_store(url: str, members: int) -> None:
    parsed = parse_store_url(url)
    assert isinstance(parsed, EtcdUrl), url
    assert len(parsed.endpoints) == members, url


def test_the_config_reads_the_variables_the_manifests_set() -> None:
    assert {"CATALOG_STORE", "CATALOG_HOST", "CATALOG_PORT", "CATALOG_NODE_NAME"} <= ENV_NAMES
    assert "CATALOG_CLOCK_OFFSET_MS" in ENV_NAMES


def test_the_probe_paths_are_routes_of_the_app() -> None:
    assert _routes() >= PROBE_PATHS


def test_the_dockerfile_runs_catalog_serve_on_the_default_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r'^ENTRYPOINT \["catalog", "serve"\]$', text, re.M)
    for name in ("CATALOG_PORT", "CATALOG_HOST"):
        monkeypatch.delenv(name, raising=False)
    port = _default_port()
    assert port == 8000
    assert re.search(rf"^EXPOSE {port}$", text, re.M)
    assert f"CATALOG_PORT={port}" in text
    assert f"127.0.0.1:{port}/healthz" in text
    assert 'catalog = "api.cli:main"' in (DEPLOY.parent / "pyproject.toml").read_text()
    assert build_parser().parse_args(["serve"]).command == "serve"
    for copied in re.findall(r"^COPY (\w+) ", text, re.M):
        assert (DEPLOY.parent / copied).is_dir(), copied


def test_docker_compose_has_3_etcd_members_3_catalog_nodes_and_spark() -> None:
    (compose,) = _load_all("docker-compose.yml")
    services: dict[str, Any] = compose["services"]
    etcd = sorted(s for s in services if s.startswith("etcd"))
    catalog = sorted(s for s in services if s.startswith("catalog"))
    assert len(etcd) == 3 and len(catalog) == 3
    for name in catalog:
        service = services[name]
        env = service["environment"]
        assert set(env) <= ENV_NAMES, set(env) - ENV_NAMES
        _check_store(env["CATALOG_STORE"], 3)
        assert {e.split(":")[0] for e in parse_store_endpoints(env["CATALOG_STORE"])} == set(etcd)
        assert env["CATALOG_NODE_NAME"] == name
        assert env.get("CATALOG_ADVERTISE_URL", f"http://{name}:8000") == f"http://{name}:8000"
        port = int(env["CATALOG_PORT"])
        assert any(p.endswith(f":{port}") for p in service["ports"])
        assert f"127.0.0.1:{port}/readyz" in " ".join(service["healthcheck"]["test"])
        assert service["build"]["dockerfile"] == "deploy/Dockerfile"
        assert set(service["depends_on"]) == set(etcd)
        # Auth is on (not a loopback bind): a node without the token secret would not start.
        assert env["CATALOG_HOST"] == "0.0.0.0"
        (secret,) = service["secrets"]
        assert env["CATALOG_TOKEN_SECRET_FILE"] == f"/run/secrets/{secret}"
        assert secret in compose["secrets"]
    for name in etcd:
        env = services[name]["environment"]
        assert env["ETCD_NAME"] == name
        assert env["ETCD_INITIAL_CLUSTER"].count("=http://") == 3
    images = {services[s]["image"] for s in ("spark-master", "spark-worker")}
    assert all(i.startswith("apache/spark:") for i in images)
    assert "spark://spark-master:7077" in services["spark-worker"]["command"]


def parse_store_endpoints(url: str) -> list[str]:
    parsed = parse_store_url(url)
    assert isinstance(parsed, EtcdUrl)
    return [f"{host}:{port}" for host, port in parsed.endpoints]


def test_k8s_etcd_is_a_3_member_statefulset_behind_a_headless_service() -> None:
    kinds = _by_kind("k8s/etcd.yaml")
    service, stateful = kinds["Service"], kinds["StatefulSet"]
    assert service["spec"]["clusterIP"] == "None"
    assert stateful["spec"]["serviceName"] == service["metadata"]["name"]
    assert stateful["spec"]["replicas"] == 3
    labels = stateful["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"] == labels == stateful["spec"]["selector"]["matchLabels"]
    ports = {p["name"]: p["port"] for p in service["spec"]["ports"]}
    assert ports == {"client": 2379, "peer": 2380}
    (container,) = stateful["spec"]["template"]["spec"]["containers"]
    cluster_flag = next(a for a in container["command"] if a.startswith("--initial-cluster="))
    assert cluster_flag.count("=http://") == 3


def test_k8s_catalog_deployment_probes_ports_and_config() -> None:
    config = _by_kind("k8s/configmap.yaml")["ConfigMap"]
    data: dict[str, str] = config["data"]
    assert set(data) <= ENV_NAMES, set(data) - ENV_NAMES
    assert all(isinstance(v, str) for v in data.values())  # ConfigMap values are strings
    etcd = _by_kind("k8s/etcd.yaml")
    replicas = etcd["StatefulSet"]["spec"]["replicas"]
    _check_store(data["CATALOG_STORE"], replicas)
    etcd_name = etcd["Service"]["metadata"]["name"]
    for i, endpoint in enumerate(parse_store_endpoints(data["CATALOG_STORE"])):
        assert endpoint == f"{etcd_name}-{i}.{etcd_name}:2379"

    kinds = _by_kind("k8s/catalog.yaml")
    deployment, service = kinds["Deployment"], kinds["Service"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["envFrom"] == [{"configMapRef": {"name": config["metadata"]["name"]}}]
    assert {e["name"] for e in container["env"]} - {"POD_IP"} <= ENV_NAMES
    port = int(data["CATALOG_PORT"])
    assert port == _default_port()
    named = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert named == {"http": port}
    routes = _routes()
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        get = container[probe]["httpGet"]
        assert get["path"] == path and path in routes
        assert get["port"] in ("http", port)
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["targetPort"] in ("http", port)
    # Auth is on (not a loopback bind): the token secret is mounted where the config says.
    assert data["CATALOG_HOST"] == "0.0.0.0"
    (mount,) = container["volumeMounts"]
    assert data["CATALOG_TOKEN_SECRET_FILE"].startswith(mount["mountPath"] + "/")
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert "secret" in volumes[mount["name"]]
