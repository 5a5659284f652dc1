// The row every benchmark prints for bench/run.js, one JSON line on stdout
// per figure: {bench, case, metric, value, unit} and, against a baseline
// measured in the same run, {baseline, ratio} (value / baseline unless given).
// A figure measured several times is given as its spread(): the median is the
// value, and its lowest and highest go beside it ({min, max}), so that a
// reader sees how far to trust the median.
export function reporter(bench) {
  return (c, metric, value, unit, baseline, ratio) => {
    const { median, min, max } = typeof value === "object" && value !== null ? value : { median: value };
    ratio ??= baseline !== undefined ? median / baseline : undefined;
    const row = {
      bench,
      case: c,
      metric,
      value: median,
      ...(min !== undefined ? { min, max } : {}),
      unit,
      ...(baseline !== undefined ? { baseline, ratio } : {}),
    };
    process.stdout.write(JSON.stringify(row) + "\n");
  };
}

/** Samples of one figure (each times `scale`) as their median, lowest and highest. */
export function spread(samples, scale = 1) {
  const xs = samples.map((x) => x * scale).sort((a, b) => a - b);
  return { median: xs[Math.floor(xs.length / 2)], min: xs[0], max: xs[xs.length - 1] };
}
