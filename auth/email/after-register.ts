// STUB (the email part of auth replaces it): what follows a registration (the verification code).
import type { Engine } from '../../engine/module.js';

export async function afterRegister(_engine: Engine, _user: { id: string; email: string; tenantId: string }): Promise<void> {}
