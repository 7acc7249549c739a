// Reading one environment variable of a given kind: a whole number, a factor, on/off, a URL, a
// list of folders. A bad value is a ConfigError naming the variable and what it must be.
import { statSync } from 'node:fs';
import path from 'node:path';

export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

export function integer(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

/** A connection URL of another service, if set; a value that is not one of its protocols names the variable. */
export function serviceUrl(env: Env, name: string, protocols: string[], example: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL such as ${example}`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.map((p) => `${p}//`).join(' or ')}, got "${url.protocol}"`);
  }
  return raw;
}

/** A list of folders separated like PATH; each must exist, so a typo fails here, not later. */
export function folders(env: Env, name: string): string[] {
  const raw = env[name];
  if (!raw) return [];
  return raw
    .split(path.delimiter)
    .filter(Boolean)
    .map((entry) => {
      const dir = path.resolve(entry);
      let isDir = false;
      try {
        isDir = statSync(dir).isDirectory();
      } catch {
        // reported below
      }
      if (!isDir) throw new ConfigError(`${name}: "${entry}" is not a folder`);
      return dir;
    });
}

export function httpUrl(env: Env, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

/** A positive decimal number, such as 0.5 or 10. */
export function factor(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(value > 0)) throw new ConfigError(`${name} must be a positive number such as 0.5 or 10, got "${raw}"`);
  return value;
}

export function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new ConfigError(`${name} must be on or off, got "${raw}"`);
}
