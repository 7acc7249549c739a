// The definitions the app compiles (resources folders, then the modules' own files, auth's
// included), compiled the same way, for tools that need them without an app: the migration
// check and `npm run db:migration`.
import { authModules } from '../../auth/modules.js';
import { loadRoles } from '../../auth/roles.js';
import type { Module } from '../module.js';
import { ROLES_FILE } from '../paths.js';
import { compileDefinitions } from '../resource/compile.js';
import type { Registry } from '../resource/compiled.js';
import { loadDefinitionDir, loadDefinitionFile } from '../resource/load.js';

export function loadRegistry(resourceDirs: string[], modules: Module[], rolesFile = ROLES_FILE): Registry {
  const sources = [
    ...resourceDirs.flatMap((dir) => loadDefinitionDir(dir)),
    ...[...authModules, ...modules].flatMap((m) => (m.definitions ?? []).map((file) => loadDefinitionFile(file))),
  ];
  return compileDefinitions(sources, { permissions: loadRoles(rolesFile).permissions });
}
