// The configuration files of deploy/ (HAProxy, PgBouncer, Patroni) as the
// scale proofs run them: each file is the reference an operator copies, with
// {{name}} where a deployment puts its own value (addresses, ports, folders);
// the proofs fill them in, so that what they prove is what deploy/ ships.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const DEPLOY_DIR = path.resolve(__dirname, '..', '..', 'deploy');

/** deploy/<file> with every {{name}} replaced; a name without a value (or a value no name uses) is an error. */
export function renderTemplate(file: string, values: Record<string, string | number>): string {
  const text = readFileSync(path.join(DEPLOY_DIR, file), 'utf8');
  const used = new Set<string>();
  const out = text.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`${file}: no value for {{${name}}}`);
    used.add(name);
    return String(values[name]);
  });
  const unused = Object.keys(values).filter((name) => !used.has(name));
  if (unused.length > 0) throw new Error(`${file}: no {{${unused.join('}}, {{')}}} in the file`);
  return out;
}
