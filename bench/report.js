// The row every benchmark prints for bench/run.js, one JSON line on stdout
// per figure: {bench, case, metric, value, unit} and, against a baseline
// measured in the same run, {baseline, ratio} (value / baseline unless given).
export function reporter(bench) {
  return (c, metric, value, unit, baseline, ratio = baseline !== undefined ? value / baseline : undefined) => {
    const row = { bench, case: c, metric, value, unit, ...(baseline !== undefined ? { baseline, ratio } : {}) };
    process.stdout.write(JSON.stringify(row) + "\n");
  };
}
