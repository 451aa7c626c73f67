// What is running: the package's version (package.json), the build's source
// revision when the image or the deploy says it (BUILD_REVISION), and Node's.
// /metrics' build_info and `admin --version` report it.
import { readFileSync } from 'node:fs';
import { PACKAGE_JSON } from './paths';

export interface BuildInfo {
  version: string;
  revision: string;
  node: string;
}

let info: BuildInfo | undefined;

export function buildInfo(): BuildInfo {
  info ??= {
    version: (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version,
    revision: process.env.BUILD_REVISION ?? 'unknown',
    node: process.version,
  };
  return info;
}
