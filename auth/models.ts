// Where auth gets its way to the database. The tables that are resources (resources/user.yaml,
// role.yaml, employee.yaml) are read and written through their models, so that the tenant scope is
// the model layer's rule: scoped(caller, trx) where a signed-in caller acts in its tenant, query(trx)
// with explicit conditions where nobody is signed in yet (login, registration, social sign-in, a
// reset by token). Auth's own tables are no resources and stay on knex: tenant, user_session,
// refresh_token, email_code, email_code_event, password_reset, user_identity, social_login_state.
import type { Engine } from '../engine/module.js';
import type { Registry } from '../engine/resource/compiled.js';
import type { ResourceModelClass } from '../engine/resource/model.js';

export interface AuthModels {
  user: ResourceModelClass;
  role: ResourceModelClass;
  employee: ResourceModelClass;
}

const modelsOf = new WeakMap<Registry, AuthModels>();

/** The models of the app's user, role and employee resources; a missing one stops start-up. */
export function authModels(engine: Pick<Engine, 'registry'>): AuthModels {
  let models = modelsOf.get(engine.registry);
  if (!models) {
    const model = (name: string) => {
      const resource = engine.registry.get(name);
      if (!resource) throw new Error(`auth needs the ${name} resource (resources/${name}.yaml)`);
      return resource.model;
    };
    models = { user: model('user'), role: model('role'), employee: model('employee') };
    modelsOf.set(engine.registry, models);
  }
  return models;
}
