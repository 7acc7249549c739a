// Who is asking: taken from a verified access token, never from the request body.
export interface Caller {
  userId: string;
  tenantId: string;
  role: string;
  employeeId?: string;
  organizationId?: string;
  /** The sign-in session the access token belongs to (its `sid`), when the token carries one. */
  sessionId?: string;
  permissions: ReadonlySet<string>;
}

/** The role limited to its own records through each resource's owner field. */
export const OWNER_SCOPED_ROLE = 'EMPLOYEE';

/** Permission names a definition may use; 'authenticated' admits any signed-in caller of the tenant. */
export const ANY_AUTHENTICATED = 'authenticated';
