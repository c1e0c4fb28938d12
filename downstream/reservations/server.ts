// Entry point of the sandbox reservation service: `node --import tsx downstream/reservations/server.ts`.
import { runSandbox } from '../shared/service.js';
import { buildApp } from './app.js';
import { loadReservationsConfig } from './config.js';

runSandbox('reservations', () => loadReservationsConfig(), buildApp);
