// Certificates made on the spot with openssl, for TLS to a private broker and Redis: a CA, a
// server certificate for 127.0.0.1/localhost signed by it, and a second CA nobody trusts (to
// prove an untrusted certificate stops the scorer). Written to a throwaway folder, never to git.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface LocalCertificates {
  readonly dir: string;
  /** PEM of the CA that signed the server certificate. */
  readonly caFile: string;
  /** PEM of an unrelated CA. */
  readonly otherCaFile: string;
  readonly certFile: string;
  /** Unencrypted PKCS#8 key of the server certificate. */
  readonly keyFile: string;
  /** Key (PKCS#8) followed by the certificate: Kafka's PEM keystore. */
  readonly keystoreFile: string;
}

const openssl = (cwd: string, ...args: string[]) => execFileSync("openssl", args, { cwd, stdio: "pipe" });

function makeCa(dir: string, name: string): void {
  openssl(
    dir,
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    `/CN=${name}`,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.pem`,
  );
}

export function makeLocalCertificates(dir: string): LocalCertificates {
  mkdirSync(dir, { recursive: true });
  makeCa(dir, "chaos-ca");
  makeCa(dir, "chaos-other-ca");
  writeFileSync(join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl(
    dir,
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=localhost",
    "-keyout",
    "server.rsa.key",
    "-out",
    "server.csr",
  );
  openssl(dir, "pkcs8", "-topk8", "-nocrypt", "-in", "server.rsa.key", "-out", "server.key");
  openssl(
    dir,
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "chaos-ca.pem",
    "-CAkey",
    "chaos-ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    "server.ext",
    "-out",
    "server.pem",
  );
  const keystoreFile = join(dir, "server.keystore.pem");
  writeFileSync(
    keystoreFile,
    readFileSync(join(dir, "server.key"), "utf8") + readFileSync(join(dir, "server.pem"), "utf8"),
  );
  return {
    dir,
    caFile: join(dir, "chaos-ca.pem"),
    otherCaFile: join(dir, "chaos-other-ca.pem"),
    certFile: join(dir, "server.pem"),
    keyFile: join(dir, "server.key"),
    keystoreFile,
  };
}
