// 20261127180055_search_indexes: written by `npm run db:migration` for these differences between the
// definitions and the migrated schema (read it, and adjust onDelete and lengths where the
// defaults chosen do not fit):
//   - candidate_interview has no fulltext search index on (note); search (fulltext over note) needs one
//   - candidate_interview has no trigram index on title; search (substring of title) needs one
//   - candidate_interview has no trigram index on location; search (substring of location) needs one
//   - candidate_source has no trigram index on name; search (substring of name) needs one
//   - comment has no fulltext search index on (comment); search (fulltext over comment) needs one
//   - contact has no trigram index on name; search (substring of name) needs one
//   - contact has no trigram index on city; search (substring of city) needs one
//   - contact has no trigram index on address; search (substring of address) needs one
//   - contact has no trigram index on postcode; search (substring of postcode) needs one
//   - employee has no trigram index on firstName; search (substring of firstName) needs one
//   - employee has no trigram index on lastName; search (substring of lastName) needs one
//   - image_asset has no trigram index on name; search (substring of name) needs one
//   - invoice_item has no fulltext search index on (description); search (fulltext over description) needs one
//   - invoice has no fulltext search index on (terms); search (fulltext over terms) needs one
//   - organization_contact has no trigram index on name; search (substring of name) needs one
//   - organization_contact has no trigram index on primaryEmail; search (substring of primaryEmail) needs one
//   - organization_contact has no trigram index on primaryPhone; search (substring of primaryPhone) needs one
//   - organization_project has no fulltext search index on (description); search (fulltext over description) needs one
//   - organization_project has no trigram index on name; search (substring of name) needs one
//   - organization_sprint has no fulltext search index on (goal); search (fulltext over goal) needs one
//   - organization_sprint has no trigram index on name; search (substring of name) needs one
//   - organization_team has no trigram index on name; search (substring of name) needs one
//   - organization has no trigram index on name; search (substring of name) needs one
//   - skill has no fulltext search index on (description); search (fulltext over description) needs one
//   - skill has no trigram index on name; search (substring of name) needs one
//   - tag has no fulltext search index on (description); search (fulltext over description) needs one
//   - tag has no trigram index on name; search (substring of name) needs one
//   - task has no fulltext search index on (description); search (fulltext over description) needs one
//   - task has no trigram index on title; search (substring of title) needs one
//   - time_log has no fulltext search index on (description); search (fulltext over description) needs one
//   - time_off_request has no fulltext search index on (description); search (fulltext over description) needs one
//   - user has no trigram index on email; search (substring of email) needs one
//   - user has no trigram index on firstName; search (substring of firstName) needs one
//   - user has no trigram index on lastName; search (substring of lastName) needs one
//   - event_type has no trigram index on title; search (substring of title) needs one
//   - event_type has no trigram index on description; search (substring of description) needs one
import type { Knex } from 'knex';
import { dropSearchIndex, fulltextIndex, trigramIndex } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await fulltextIndex(knex, 'candidate_interview', ['note']);
  await trigramIndex(knex, 'candidate_interview', 'title');
  await trigramIndex(knex, 'candidate_interview', 'location');
  await trigramIndex(knex, 'candidate_source', 'name');
  await fulltextIndex(knex, 'comment', ['comment']);
  await trigramIndex(knex, 'contact', 'name');
  await trigramIndex(knex, 'contact', 'city');
  await trigramIndex(knex, 'contact', 'address');
  await trigramIndex(knex, 'contact', 'postcode');
  await trigramIndex(knex, 'employee', 'firstName');
  await trigramIndex(knex, 'employee', 'lastName');
  await trigramIndex(knex, 'image_asset', 'name');
  await fulltextIndex(knex, 'invoice_item', ['description']);
  await fulltextIndex(knex, 'invoice', ['terms']);
  await trigramIndex(knex, 'organization_contact', 'name');
  await trigramIndex(knex, 'organization_contact', 'primaryEmail');
  await trigramIndex(knex, 'organization_contact', 'primaryPhone');
  await fulltextIndex(knex, 'organization_project', ['description']);
  await trigramIndex(knex, 'organization_project', 'name');
  await fulltextIndex(knex, 'organization_sprint', ['goal']);
  await trigramIndex(knex, 'organization_sprint', 'name');
  await trigramIndex(knex, 'organization_team', 'name');
  await trigramIndex(knex, 'organization', 'name');
  await fulltextIndex(knex, 'skill', ['description']);
  await trigramIndex(knex, 'skill', 'name');
  await fulltextIndex(knex, 'tag', ['description']);
  await trigramIndex(knex, 'tag', 'name');
  await fulltextIndex(knex, 'task', ['description']);
  await trigramIndex(knex, 'task', 'title');
  await fulltextIndex(knex, 'time_log', ['description']);
  await fulltextIndex(knex, 'time_off_request', ['description']);
  await trigramIndex(knex, 'user', 'email');
  await trigramIndex(knex, 'user', 'firstName');
  await trigramIndex(knex, 'user', 'lastName');
  await trigramIndex(knex, 'event_type', 'title');
  await trigramIndex(knex, 'event_type', 'description');
}

export async function down(knex: Knex) {
  await dropSearchIndex(knex, 'event_type_description_trigram');
  await dropSearchIndex(knex, 'event_type_title_trigram');
  await dropSearchIndex(knex, 'user_lastname_trigram');
  await dropSearchIndex(knex, 'user_firstname_trigram');
  await dropSearchIndex(knex, 'user_email_trigram');
  await dropSearchIndex(knex, 'time_off_request_search_fulltext');
  await dropSearchIndex(knex, 'time_log_search_fulltext');
  await dropSearchIndex(knex, 'task_title_trigram');
  await dropSearchIndex(knex, 'task_search_fulltext');
  await dropSearchIndex(knex, 'tag_name_trigram');
  await dropSearchIndex(knex, 'tag_search_fulltext');
  await dropSearchIndex(knex, 'skill_name_trigram');
  await dropSearchIndex(knex, 'skill_search_fulltext');
  await dropSearchIndex(knex, 'organization_name_trigram');
  await dropSearchIndex(knex, 'organization_team_name_trigram');
  await dropSearchIndex(knex, 'organization_sprint_name_trigram');
  await dropSearchIndex(knex, 'organization_sprint_search_fulltext');
  await dropSearchIndex(knex, 'organization_project_name_trigram');
  await dropSearchIndex(knex, 'organization_project_search_fulltext');
  await dropSearchIndex(knex, 'organization_contact_primaryphone_trigram');
  await dropSearchIndex(knex, 'organization_contact_primaryemail_trigram');
  await dropSearchIndex(knex, 'organization_contact_name_trigram');
  await dropSearchIndex(knex, 'invoice_search_fulltext');
  await dropSearchIndex(knex, 'invoice_item_search_fulltext');
  await dropSearchIndex(knex, 'image_asset_name_trigram');
  await dropSearchIndex(knex, 'employee_lastname_trigram');
  await dropSearchIndex(knex, 'employee_firstname_trigram');
  await dropSearchIndex(knex, 'contact_postcode_trigram');
  await dropSearchIndex(knex, 'contact_address_trigram');
  await dropSearchIndex(knex, 'contact_city_trigram');
  await dropSearchIndex(knex, 'contact_name_trigram');
  await dropSearchIndex(knex, 'comment_search_fulltext');
  await dropSearchIndex(knex, 'candidate_source_name_trigram');
  await dropSearchIndex(knex, 'candidate_interview_location_trigram');
  await dropSearchIndex(knex, 'candidate_interview_title_trigram');
  await dropSearchIndex(knex, 'candidate_interview_search_fulltext');
}
