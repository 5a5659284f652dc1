// The deployment kit (deploy/): a systemd unit and an environment file that
// keep up with the settings the server reads, and a Kubernetes example whose
// probes a real server answers.
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SETTINGS, loadSettings } from "../../src/config/settings.js";
import { startTestServer } from "../helpers/server.js";

const unit = readFileSync(new URL("../../deploy/meridian.service", import.meta.url), "utf8");
const envExample = readFileSync(new URL("../../deploy/meridian.env.example", import.meta.url), "utf8");
const analyze = spawnSync("systemd-analyze", ["--version"]).status === 0;

describe("deploy/", () => {
  it("D31 meridian.env.example names every setting the server reads, and the binary's cache directory", () => {
    const named = new Set([...envExample.matchAll(/^#?(MERIDIAN_[A-Z0-9_]+)=/gm)].map((m) => m[1]));
    expect([...SETTINGS.map((s) => s.env), "MERIDIAN_CACHE_DIR"].filter((e) => !named.has(e))).toEqual([]);
  });

  it("D38 the unit runs the binary as its own user, with a state directory, a read-only system, no new privileges, an environment file and restarts", () => {
    const keys = Object.fromEntries([...unit.matchAll(/^([A-Za-z]+)=(.*)$/gm)].map((m) => [m[1], m[2]]));
    expect(keys).toMatchObject({
      DynamicUser: "yes",
      StateDirectory: "meridian",
      ProtectSystem: "strict",
      NoNewPrivileges: "yes",
      EnvironmentFile: "-/etc/meridian/meridian.env",
      ExecStart: "/usr/local/bin/meridian serve",
      Restart: "on-failure",
      RestartPreventExitStatus: "78",
      KillSignal: "SIGTERM",
    });
    expect(unit).toContain("Environment=MERIDIAN_DB=/var/lib/meridian/meridian.db");
  });

  it.skipIf(!analyze)("the unit passes systemd-analyze verify", () => {
    const dir = mkdtempSync(join(tmpdir(), "meridian-unit-"));
    try {
      // verify checks that ExecStart's program exists: any will do here.
      writeFileSync(join(dir, "meridian.service"), unit.replaceAll("/usr/local/bin/meridian", "/bin/true"));
      const r = spawnSync("systemd-analyze", ["verify", join(dir, "meridian.service")], { encoding: "utf8" });
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe("kubernetes.yaml", () => {
    interface Probe {
      httpGet: { path: string; port: string };
    }
    interface Container {
      image: string;
      args: string[];
      ports: { name: string; containerPort: number }[];
      env: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
      startupProbe: Probe;
      livenessProbe: Probe;
      readinessProbe: Probe;
    }
    const text = readFileSync(new URL("../../deploy/kubernetes.yaml", import.meta.url), "utf8");
    const docs = parseAllDocuments(text);
    const objects = docs.map((d) => d.toJS() as { kind: string; spec: Record<string, never> });
    const deployment = objects.find((o) => o.kind === "Deployment") as unknown as {
      spec: { template: { spec: { terminationGracePeriodSeconds: number; containers: Container[] } } };
    };
    const service = objects.find((o) => o.kind === "Service") as unknown as { spec: { ports: { targetPort: string }[] } };
    const container = deployment?.spec.template.spec.containers[0];

    it("D57 parses as a Deployment and a Service; liveness and startup ask /healthz, readiness /readyz, on the port the server listens on", () => {
      expect(docs.flatMap((d) => d.errors)).toEqual([]);
      expect(objects.map((o) => o.kind)).toEqual(["Deployment", "Service"]);
      expect([container.startupProbe, container.livenessProbe, container.readinessProbe].map((p) => p.httpGet)).toEqual([
        { path: "/healthz", port: "http" },
        { path: "/healthz", port: "http" },
        { path: "/readyz", port: "http" },
      ]);
      const env = Object.fromEntries(container.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
      const settings = loadSettings({ ...env, MERIDIAN_DB: "postgres://u@db/meridian" }); // every value is one the server takes
      expect(container.ports.find((p) => p.name === "http")?.containerPort).toBe(settings.port);
      expect(settings.host).toBe("0.0.0.0");
      expect(container.ports.find((p) => p.name === "metrics")?.containerPort).toBe(
        settings.metrics.kind === "own" ? settings.metrics.port : undefined,
      );
      expect(service.spec.ports.map((p) => p.targetPort)).toEqual(["http"]);
      // Long enough for the drain (D32: 10 s).
      expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(10);
    });

    it("D40 MERIDIAN_DB comes from a Secret; the image is one line to change", () => {
      expect(container.env.find((e) => e.name === "MERIDIAN_DB")?.valueFrom?.secretKeyRef).toEqual({ name: "meridian-db", key: "url" });
      expect(text.match(/^\s*image: \S+$/gm)).toHaveLength(1);
      expect(container.args).toEqual(["serve"]);
    });

    it("D57 a real server answers each probe's path with 200", async () => {
      const server = await startTestServer();
      try {
        for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
          expect((await fetch(server.url + probe.httpGet.path)).status).toBe(200);
        }
      } finally {
        await server.close();
      }
    });
  });
});
