// Who is asking: what an authenticator (injected into createApp) found in the request's
// credentials, never taken from the request body. The engine reads only these generic parts: the
// tenant, the role and its permissions, and named claims (an owner rule or a `callerDefault` field
// names the claim it reads).
export interface Caller {
  userId: string;
  tenantId: string;
  role: string;
  permissions: ReadonlySet<string>;
  /** Further attributes of the caller, by name (an employee id, an organization id, a session id). */
  claims: Readonly<Record<string, string | undefined>>;
}

/**
 * The owner rule: callers of `role` reach only the records of a resource with an `owner` field
 * whose owner is the value of their claim `claim` (none at all without one), and write records
 * only for it. Callers of any other role reach every record of their tenant.
 */
export interface OwnerRule {
  role: string;
  claim: string;
  /** How the OpenAPI document words the owner: "… records whose <owner field> is <ownerIs>". */
  ownerIs: string;
}

/** Roles and what they may do; the owner rule, when the application has one. */
export interface RoleTable {
  permissions: ReadonlySet<string>;
  grants: ReadonlyMap<string, ReadonlySet<string>>;
  owner?: OwnerRule;
}

/** The claim a caller's organization is named by, when it has one: a new record's default organization. */
export const ORGANIZATION_CLAIM = 'organizationId';

/** Permission names a definition may use; 'authenticated' admits any signed-in caller of the tenant. */
export const ANY_AUTHENTICATED = 'authenticated';

/** Whether the caller's role grants the permission (any caller for 'authenticated'). */
export const grants = (caller: Caller, permission: string) => permission === ANY_AUTHENTICATED || caller.permissions.has(permission);
