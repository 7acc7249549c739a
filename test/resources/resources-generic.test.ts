// Every resource definition of the project through the CRUD contract, from its
// compiled definition alone: a new YAML file joins this suite with no test code. The checks are
// test/helpers/generic-crud.ts (create, read, list with each filter, sort field, search, date
// range and tags, each relations[] path, replace, modify, delete, required fields, enums and
// tenant isolation); test/docs/readme-example.test.ts runs them over the README's example resource.
import { test } from 'uvu';
import { genericCrudTests } from '../helpers/generic-crud.js';

genericCrudTests();

test.run();
