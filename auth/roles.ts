// roles.yaml → role name → set of permissions, checked when loaded so that a typo in a
// permission name stops start-up instead of silently denying (or granting) access.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export const ROLES = ['SUPER_ADMIN', 'ADMIN', 'MANAGER', 'DATA_ENTRY', 'EMPLOYEE', 'CANDIDATE', 'VIEWER', 'INTERVIEWER'] as const;
export type RoleName = (typeof ROLES)[number];
/** Roles that may register users into their own tenant and assign roles. */
export const ADMIN_ROLES: ReadonlySet<string> = new Set(['SUPER_ADMIN', 'ADMIN']);

export interface RoleTable {
  permissions: Set<string>;
  grants: Map<string, ReadonlySet<string>>;
}

type RoleSpec = 'all' | string[] | { allExcept: string[] };

export function loadRoles(file: string): RoleTable {
  const doc = parse(readFileSync(file, 'utf8')) as { permissions?: unknown; roles?: Record<string, RoleSpec> };
  const fail = (fault: string): never => {
    throw new Error(`${file}: ${fault}`);
  };
  if (!Array.isArray(doc?.permissions) || !doc.permissions.every((p) => typeof p === 'string' && /^[A-Z][A-Z_]*$/.test(p))) {
    fail('permissions must be a list of UPPER_CASE names');
  }
  const permissions = new Set(doc.permissions as string[]);
  const grants = new Map<string, ReadonlySet<string>>();
  for (const role of ROLES) {
    const spec = doc.roles?.[role];
    if (spec === undefined) fail(`roles.${role} is missing`);
    const granted =
      spec === 'all'
        ? [...permissions]
        : Array.isArray(spec)
          ? spec
          : typeof spec === 'object' && spec && Array.isArray(spec.allExcept)
            ? [...permissions].filter((p) => !spec.allExcept.includes(p))
            : fail(`roles.${role} must be "all", a list, or {allExcept: [...]}`);
    const listed = Array.isArray(spec) ? spec : typeof spec === 'object' ? spec.allExcept : [];
    for (const p of listed) if (!permissions.has(p)) fail(`roles.${role}: "${p}" is not in permissions`);
    grants.set(role, new Set(granted));
  }
  for (const role of Object.keys(doc.roles ?? {})) if (!grants.has(role)) fail(`roles.${role} is not a known role (${ROLES.join(', ')})`);
  return { permissions, grants };
}
