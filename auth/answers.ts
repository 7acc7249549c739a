// The body of a success that has nothing else to say (as Ever Gauzy answers the email and
// password routes), and its schema for their OpenAPI paths.
export const OK = { status: 200, message: 'OK' } as const;

export const okSchema = {
  type: 'object',
  required: ['status', 'message'],
  properties: { status: { type: 'integer', enum: [200] }, message: { type: 'string', enum: ['OK'] } },
};
