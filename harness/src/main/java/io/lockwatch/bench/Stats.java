package io.lockwatch.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

import io.lockwatch.bench.Sampler.Sample;

/** Figures from per-second samples, over a window of the run ("steady state": after the warm-up). */
final class Stats {

    /** Slack for the sampler's timing when deciding whether an interval lies inside a window. */
    private static final double SLACK = 0.25;

    private Stats() {
    }

    /** The per-second rates of a counter over the intervals between consecutive samples inside [from, to]. */
    static List<Double> rates(List<Sample> samples, ToLongFunction<Sample> counter, double from, double to) {
        List<Double> rates = new ArrayList<>();
        for (int i = 1; i < samples.size(); i++) {
            Sample a = samples.get(i - 1), b = samples.get(i);
            if (a.at() >= from - SLACK && b.at() <= to + SLACK && b.at() > a.at()) {
                rates.add((counter.applyAsLong(b) - counter.applyAsLong(a)) / (b.at() - a.at()));
            }
        }
        return rates;
    }

    /**
     * Like {@link #rates}, but only over the intervals in which unrelated processes used less than
     * {@code maxOtherCores} (on a shared machine, the seconds nothing else disturbed).
     */
    static List<Double> quietRates(List<Sample> samples, ToLongFunction<Sample> counter, double from, double to,
                                   double maxOtherCores) {
        List<Double> rates = new ArrayList<>();
        for (int i = 1; i < samples.size(); i++) {
            Sample a = samples.get(i - 1), b = samples.get(i);
            double other = b.cpuCores().getOrDefault(CpuSampler.OTHER, Double.NaN);
            if (a.at() >= from - SLACK && b.at() <= to + SLACK && b.at() > a.at() && other < maxOtherCores) {
                rates.add((counter.applyAsLong(b) - counter.applyAsLong(a)) / (b.at() - a.at()));
            }
        }
        return rates;
    }

    static double median(List<Double> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /** Mean cores per process group over the intervals that end inside (from, to]. */
    static Map<String, Double> meanCpu(List<Sample> samples, double from, double to) {
        Map<String, Double> sums = new LinkedHashMap<>();
        int n = 0;
        for (int i = 1; i < samples.size(); i++) {
            Sample a = samples.get(i - 1), b = samples.get(i);
            if (a.at() >= from - SLACK && b.at() <= to + SLACK) {
                b.cpuCores().forEach((group, cores) -> sums.merge(group, cores, Double::sum));
                n++;
            }
        }
        int count = n;
        sums.replaceAll((group, sum) -> count == 0 ? Double.NaN : sum / count);
        return sums;
    }

    static double maxHeap(List<Sample> samples) {
        return samples.stream().mapToDouble(Sample::heapBytes).filter(h -> !Double.isNaN(h)).max().orElse(Double.NaN);
    }
}
