// Image upload and serving, beside the generated image-asset CRUD (image-asset.yaml): POST
// /api/image-asset/upload takes a multipart file and answers the record it made; GET
// /api/image-asset/{id}/file serves the file to its own tenant; DELETE removes the file with
// its record. Both spellings of the resource's path, as everywhere.
import type { Engine, Module } from '../../engine/module.js';
import type { ResourceService } from '../../engine/resource/service.js';
import { imageUploadOpenApi } from './openapi.js';
import { registerImageRoutes } from './routes.js';

const IMAGE_ASSET = 'image-asset';

/** The upload routes read their own (multipart) body: the JSON body parser leaves them alone. */
const UPLOAD_PATH = /^\/api\/image-assets?\/upload\/?$/;

function serviceOf(engine: Engine): ResourceService {
  const service = engine.services.get(IMAGE_ASSET);
  if (!service) throw new Error(`The image-upload module needs the ${IMAGE_ASSET} resource: is image-asset.yaml loaded?`);
  // Every spelling of the resource must be one the JSON parser skips, or its upload would be a 415.
  for (const path of service.resource.paths) {
    if (!UPLOAD_PATH.test(`/api/${path}/upload`)) throw new Error(`image-upload: /api/${path}/upload is not in the module's ownBodies`);
  }
  return service;
}

export const imageUploadModule: Module = {
  name: 'image-upload',
  ownBodies: [{ method: 'POST', path: UPLOAD_PATH }],
  register(router, engine) {
    registerImageRoutes(router, engine, serviceOf(engine));
  },
  openapi(engine) {
    return imageUploadOpenApi(serviceOf(engine).resource, engine.config.uploadMaxBytes);
  },
};
