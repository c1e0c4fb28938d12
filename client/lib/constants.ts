/** Where `npm start` serves the API. */
export const DEFAULT_BASE_URL = 'http://localhost:3000';
