// Image upload and serving, beside the generated image-asset CRUD (image-asset.yaml): POST
// /api/image-asset/upload takes a multipart file and answers the record it made; GET
// /api/image-asset/{id}/file serves the file to its own tenant; DELETE removes the file with
// its record. Both spellings of the resource's path, as everywhere.
import type { Engine, Module } from '../../engine/module.js';
import type { ResourceService } from '../../engine/resource/service.js';
import { imageRoutes } from './routes.js';

const IMAGE_ASSET = 'image-asset';

function serviceOf(engine: Engine): ResourceService {
  const service = engine.services.get(IMAGE_ASSET);
  if (!service) throw new Error(`The image-upload module needs the ${IMAGE_ASSET} resource: is image-asset.yaml loaded?`);
  return service;
}

export const imageUploadModule: Module = {
  name: 'image-upload',
  routes: (engine) => imageRoutes(engine, serviceOf(engine)),
};
