// The trace viewer `npm start -- --traces` runs on this machine, without Docker: Zipkin's
// server (Maven Central io.zipkin:zipkin-server:3.5.1, classifier exec: one self-contained
// jar of 131 MB), fetched once into the git-ignored .tools/zipkin like the Temporal CLI, and
// run with `java -jar` (Java 17 or later) as a supervised part of the stack: in memory (its
// spans last until it stops), on loopback only. Order: ZIPKIN_JAR_PATH, the copy in
// .tools/zipkin, the one in the local Maven repository, then `mvn dependency:get`.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onPath } from './executables.js';
import type { Command } from './supervisor/child.js';

export const ZIPKIN_VERSION = '3.5.1';
export const ZIPKIN_ARTIFACT = `io.zipkin:zipkin-server:${ZIPKIN_VERSION}:jar:exec`;
const JAR_NAME = `zipkin-server-${ZIPKIN_VERSION}-exec.jar`;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Java's major version the server needs. */
const JAVA_MAJOR = 17;

/** Why the viewer cannot run here, in one sentence that says what to do. */
export class ZipkinUnavailableError extends Error {
  override name = 'ZipkinUnavailableError';
}

/** Where the jar is kept once fetched. */
export function zipkinJarPath(root = ROOT): string {
  return join(root, '.tools', 'zipkin', JAR_NAME);
}

function isJar(path: string): boolean {
  try {
    return statSync(path).isFile() && statSync(path).size > 0;
  } catch {
    return false;
  }
}

/** The major version of `java` on PATH, or undefined when there is none. */
export function javaMajorVersion(java = onPath('java')): number | undefined {
  if (!java) return undefined;
  const res = spawnSync(java, ['-version'], { encoding: 'utf8' });
  // `openjdk version "17.0.15" 2025-04-15`, or `"1.8.0_392"` for Java 8.
  const version = /version "(\d+)(?:\.(\d+))?/.exec(`${res.stderr}${res.stdout}`);
  if (!version) return undefined;
  const major = Number(version[1]);
  return major === 1 ? Number(version[2]) : major;
}

/**
 * The path of the Zipkin server's jar, fetching it the first time (a message says so: it is
 * 131 MB). Throws ZipkinUnavailableError when it cannot be had or cannot run here.
 */
export function ensureZipkin(opts: { root?: string; log?: (line: string) => void } = {}): string {
  const java = javaMajorVersion();
  if (java === undefined || java < JAVA_MAJOR) {
    throw new ZipkinUnavailableError(
      `Zipkin ${ZIPKIN_VERSION} needs Java ${JAVA_MAJOR} or later on PATH (${java === undefined ? 'none found' : `found Java ${java}`}); on Debian: apt-get install openjdk-${JAVA_MAJOR}-jre-headless`,
    );
  }
  const fromEnv = process.env.ZIPKIN_JAR_PATH;
  if (fromEnv) {
    if (!isJar(fromEnv)) throw new ZipkinUnavailableError(`ZIPKIN_JAR_PATH=${fromEnv} is not a file`);
    return fromEnv;
  }
  const jar = zipkinJarPath(opts.root);
  if (isJar(jar)) return jar;
  const inMaven = join(homedir(), '.m2', 'repository', 'io', 'zipkin', 'zipkin-server', ZIPKIN_VERSION, JAR_NAME);
  if (!isJar(inMaven)) {
    const mvn = onPath('mvn');
    if (!mvn) {
      throw new ZipkinUnavailableError(
        `the Zipkin server is not in .tools/zipkin and Maven (mvn) is not on PATH to fetch it: install Maven, or set ZIPKIN_JAR_PATH to ${JAR_NAME}`,
      );
    }
    opts.log?.(`fetching the Zipkin server ${ZIPKIN_VERSION} from Maven Central (131 MB, first time only)`);
    const res = spawnSync(mvn, ['-q', 'dependency:get', `-Dartifact=${ZIPKIN_ARTIFACT}`, '-Dtransitive=false'], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (res.status !== 0 || !isJar(inMaven)) {
      throw new ZipkinUnavailableError(`mvn dependency:get ${ZIPKIN_ARTIFACT} failed (exit ${res.status ?? res.signal})`);
    }
  }
  mkdirSync(dirname(jar), { recursive: true });
  // Copied then renamed: an interrupted copy never passes for the jar.
  copyFileSync(inMaven, `${jar}.partial`);
  renameSync(`${jar}.partial`, jar);
  return jar;
}

/** How the server runs: in memory, on loopback `port`, with a heap that fits a shared laptop. */
export function zipkinCommand(jar: string, port: number): Command {
  return {
    bin: onPath('java') ?? 'java',
    args: [
      '-Xmx384m',
      '-jar',
      jar,
      `--server.port=${port}`,
      // Loopback only: the viewer shows every request's spans to whoever can reach it.
      '--armeria.ports[0].ip=127.0.0.1',
      `--armeria.ports[0].port=${port}`,
      '--armeria.ports[0].protocols[0]=http',
    ],
    orphanSignal: 'SIGTERM',
  };
}

/** The span endpoint the processes export to, and the UI a person opens. */
export function zipkinUrls(port: number): { spans: string; ui: string; health: string } {
  return {
    spans: `http://127.0.0.1:${port}/api/v2/spans`,
    ui: `http://localhost:${port}/zipkin/`,
    health: `http://127.0.0.1:${port}/health`,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv.includes('--ensure')) {
  try {
    const jar = ensureZipkin({ log: (line) => console.log(`retrysafe setup: ${line}`) });
    if (!existsSync(jar)) throw new Error(`${jar} vanished`);
    console.log(jar);
  } catch (err) {
    console.error(`retrysafe setup: ${(err as Error).message}`);
    process.exit(1);
  }
}
