import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onCleanup, type Cleanup } from './cleanup';

/** PEM files in a temporary directory: a CA, a server certificate for `localhost`/127.0.0.1 and a client certificate, all signed by the CA. */
export interface TestCertificates {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate and key signed by another CA, which the server does not trust. */
  strangerCert: string;
  strangerKey: string;
}

function openssl(cwd: string, args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA and the certificates it signs, made with the `openssl` CLI; the directory is removed when `t` ends. */
export function makeCertificates(t: Cleanup): TestCertificates {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-certs-'));
  onCleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const ca = (name: string) =>
    openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${name}`,
      '-keyout', `${name}.key`, '-out', `${name}.pem`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  const leaf = (name: string, signer: string, ext: string) => {
    openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`]);
    fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
    openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${signer}.pem`, '-CAkey', `${signer}.key`, '-CAcreateserial', '-days', '2', '-out', `${name}.pem`, '-extfile', `${name}.ext`]);
  };
  ca('ca');
  ca('other-ca');
  leaf('server', 'ca', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n');
  leaf('client', 'ca', 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n');
  leaf('stranger', 'other-ca', 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n');
  const at = (file: string) => path.join(dir, file);
  return {
    dir,
    caCert: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    strangerCert: at('stranger.pem'),
    strangerKey: at('stranger.key'),
  };
}
