// roles.yaml → role name → set of permissions, and the owner rule, checked when loaded so that a
// typo in a permission or role name stops start-up instead of silently denying (or granting) access.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { OwnerRule, RoleTable } from '../engine/caller.js';

export const ROLES = ['SUPER_ADMIN', 'ADMIN', 'MANAGER', 'DATA_ENTRY', 'EMPLOYEE', 'CANDIDATE', 'VIEWER', 'INTERVIEWER'] as const;
export type RoleName = (typeof ROLES)[number];
/** Roles that may register users into their own tenant and assign roles. */
export const ADMIN_ROLES: ReadonlySet<string> = new Set(['SUPER_ADMIN', 'ADMIN']);

type RoleSpec = 'all' | string[] | { allExcept: string[] };

export function loadRoles(file: string): RoleTable {
  const doc = parse(readFileSync(file, 'utf8')) as { permissions?: unknown; roles?: Record<string, RoleSpec>; owner?: Partial<OwnerRule> };
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
  return { permissions, grants, owner: doc.owner === undefined ? undefined : ownerRule(doc.owner, grants, fail) };
}

function ownerRule(spec: Partial<OwnerRule>, grants: ReadonlyMap<string, unknown>, fail: (fault: string) => never): OwnerRule {
  const { role, claim, ownerIs } = spec ?? {};
  if (typeof role !== 'string' || !grants.has(role)) fail(`owner.role must name a role (${ROLES.join(', ')})`);
  if (typeof claim !== 'string' || !/^[A-Za-z][A-Za-z0-9_]*$/.test(claim)) fail('owner.claim must name a claim of the caller (employeeId)');
  if (typeof ownerIs !== 'string' || !ownerIs.trim()) fail('owner.ownerIs must say whose records the role reaches, in words');
  return { role: role!, claim: claim!, ownerIs: ownerIs! };
}
