import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Development secrets for `npm start` (docs/configuration.md): JWT_SECRET and SECRETS_KEY come from the environment
 * when set; otherwise they are generated once and kept in `<dataDir>/dev-secrets.json` (mode 0600), so
 * tokens and encrypted secrets stay valid across restarts.
 */

export interface DevSecrets {
  JWT_SECRET: string;
  SECRETS_KEY: string;
  /** The file the generated values live in, or undefined when both came from the environment. */
  file: string | undefined;
}

type Stored = Partial<Record<'JWT_SECRET' | 'SECRETS_KEY', string>>;

function readStored(file: string): Stored {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (parsed && typeof parsed === 'object') return parsed as Stored;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new Error(`${file} is not valid JSON (${(err as Error).message}); fix or delete it.`);
    }
  }
  return {};
}

export function loadOrCreateDevSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env): DevSecrets {
  const fromEnv = { JWT_SECRET: env.JWT_SECRET || undefined, SECRETS_KEY: env.SECRETS_KEY || undefined };
  if (fromEnv.JWT_SECRET && fromEnv.SECRETS_KEY) {
    return { JWT_SECRET: fromEnv.JWT_SECRET, SECRETS_KEY: fromEnv.SECRETS_KEY, file: undefined };
  }

  const file = path.join(dataDir, 'dev-secrets.json');
  const stored = readStored(file);
  let changed = false;
  if (typeof stored.JWT_SECRET !== 'string' || stored.JWT_SECRET.length < 32) {
    stored.JWT_SECRET = crypto.randomBytes(48).toString('base64url'); // 64 characters
    changed = true;
  }
  if (typeof stored.SECRETS_KEY !== 'string' || Buffer.from(stored.SECRETS_KEY, 'base64').length !== 32) {
    if (stored.SECRETS_KEY !== undefined) {
      throw new Error(`${file}: SECRETS_KEY is not 32 bytes of base64. Replacing it would make stored secrets unreadable; fix or delete the file.`);
    }
    stored.SECRETS_KEY = crypto.randomBytes(32).toString('base64');
    changed = true;
  }

  fs.mkdirSync(dataDir, { recursive: true });
  if (changed) {
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(stored, null, 2) + '\n', { mode: 0o600 });
    fs.renameSync(tmp, file);
  }
  fs.chmodSync(file, 0o600);

  return {
    JWT_SECRET: fromEnv.JWT_SECRET ?? stored.JWT_SECRET,
    SECRETS_KEY: fromEnv.SECRETS_KEY ?? stored.SECRETS_KEY,
    file,
  };
}
