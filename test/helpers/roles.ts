// A copy of the project's roles.yaml with extra permissions granted, for suites that need a role
// to hold what the shipped table withholds (an EMPLOYEE that may export or import).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { ROLES_FILE } from '../../app/paths.js';

export interface RolesCopy {
  /** Give it to createTestApp as appOptions.rolesFile. */
  file: string;
  remove(): void;
}

export function rolesGranting(grants: Record<string, string[]>): RolesCopy {
  const folder = mkdtempSync(path.join(tmpdir(), 'roles-'));
  const roles = parse(readFileSync(ROLES_FILE, 'utf8'));
  for (const [role, permissions] of Object.entries(grants)) roles.roles[role] = [...roles.roles[role], ...permissions];
  const file = path.join(folder, 'roles.yaml');
  writeFileSync(file, stringify(roles));
  return { file, remove: () => rmSync(folder, { recursive: true, force: true }) };
}
