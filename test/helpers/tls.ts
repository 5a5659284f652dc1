// A self-signed certificate for 127.0.0.1 (EC P-256, one day) made by openssl,
// for the tests that serve TLS (D4, D51); undefined where openssl is missing
// (the skip summary says so).
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export function selfSignedCert(dir: string): { cert: string; key: string } | undefined {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  try {
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
        ...["-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"],
      ],
      { stdio: "ignore" },
    );
    return { cert, key };
  } catch {
    return undefined;
  }
}
