package catalogtests;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.MetricsReporter;
import org.apache.iceberg.metrics.ScanReport;

/**
 * A metrics reporter a catalog loads by its class name ({@code metrics-reporter-impl}): it counts
 * the scan and commit reports it is given and the times it is closed, for the tests to read.
 */
public class CountingMetricsReporter implements MetricsReporter {
  private static final Map<String, AtomicInteger> COUNTS = new ConcurrentHashMap<>();

  private static void count(String kind) {
    COUNTS.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
  }

  /** Returns how many times {@code kind} (scans, commits, closes) happened, and starts again. */
  public static int take(String kind) {
    AtomicInteger counted = COUNTS.remove(kind);
    return counted == null ? 0 : counted.get();
  }

  @Override
  public void report(MetricsReport report) {
    if (report instanceof ScanReport) {
      count("scans");
    } else if (report instanceof CommitReport) {
      count("commits");
    }
  }

  @Override
  public void close() {
    count("closes");
  }
}
