// Entry point of the sandbox bank: `node --import tsx downstream/bank/server.ts`.
import { runSandbox } from '../shared/service.js';
import { buildApp } from './app.js';
import { loadBankConfig } from './config.js';

runSandbox('bank', () => loadBankConfig(), buildApp);
