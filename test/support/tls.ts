// A certificate for localhost, made for the run: QuickBlox's SDKs only call
// https:// URLs, so the service under them is served over TLS (createApp's
// `https` option, as TLS_CERT_FILE/TLS_KEY_FILE configure it).
import https from 'node:https';
import { generate } from 'selfsigned';

export interface TestCertificate {
  key: string;
  cert: string;
}

export async function localhostCertificate(): Promise<TestCertificate> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 86_400_000),
    notAfterDate: new Date(Date.now() + 2 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/**
 * Makes this process's default HTTPS agent trust the certificate: the SDK
 * fetches with node-fetch, which goes through that agent. Nothing of the SDK
 * is changed; an app would trust a real certificate the same way.
 */
export function trustInThisProcess(certificate: TestCertificate): void {
  https.globalAgent.options.ca = certificate.cert;
}
