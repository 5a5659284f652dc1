import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two cores: two files at a time keeps server tests from starving each other.
    maxWorkers: 2,
    // After the summary: what was skipped and why (test/skip-summary.ts).
    reporters: ["default", "./test/skip-summary.ts"],
  },
});
