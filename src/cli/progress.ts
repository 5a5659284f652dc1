// A one-line progress bar for a terminal, redrawn at most five times a second.
import type { WriteStream } from "node:tty";

export function progressBar(out: WriteStream) {
  const started = performance.now();
  let last = 0;
  return {
    // Arrows: update is handed on alone, as a callback.
    update: (done: number, total: number, rows: number): void => {
      const now = performance.now();
      if (now - last < 200) return;
      last = now;
      const share = total > 0 ? Math.min(1, done / total) : 0;
      const width = 30;
      const filled = Math.round(share * width);
      const rate = rows / ((now - started) / 1000);
      out.write(
        `\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}%  ${rows.toLocaleString("en")} rows  ${(rate / 1e6).toFixed(2)}M rows/s `,
      );
    },
    done: (): void => {
      if (last > 0) out.write("\n");
    },
  };
}
