// The definitions an app compiles (resources folders, then the modules' own files), compiled the
// same way, for tools that need them without an app: the migration check and
// `npm run db:migration`.
import type { RoleTable } from '../caller.js';
import type { Module } from '../module.js';
import { compileDefinitions } from '../resource/compile.js';
import type { Registry } from '../resource/compiled.js';
import { loadDefinitionDir, loadDefinitionFile } from '../resource/load.js';

export function loadRegistry(resourceDirs: string[], modules: Module[], roles: Pick<RoleTable, 'permissions' | 'owner'>): Registry {
  const sources = [
    ...resourceDirs.flatMap((dir) => loadDefinitionDir(dir)),
    ...modules.flatMap((m) => (m.definitions ?? []).map((file) => loadDefinitionFile(file))),
  ];
  return compileDefinitions(sources, { permissions: roles.permissions, owner: roles.owner });
}
