// A spinner on stderr while the CLI waits, only when stderr is a terminal: piped output
// and logs stay free of control characters.
import ora from 'ora';

export interface Progress {
  update(text: string): void;
  stop(): void;
}

const silent: Progress = { update: () => undefined, stop: () => undefined };

export function startProgress(stream: NodeJS.WriteStream, text: string): Progress {
  // A terminal that reports no width (some CI pseudo-terminals) would make the spinner
  // redraw as if every line wrapped endlessly.
  if (!stream.isTTY || !(stream.columns > 0)) return silent;
  const spinner = ora({ text, stream, discardStdin: false }).start();
  return {
    update: (next) => {
      spinner.text = next;
    },
    stop: () => spinner.stop(),
  };
}
