// The baseline's only activity: returns at once, so the baseline measures the engine.
export const baselineActivities = {
  async noop(_key: string): Promise<void> {},
};

export type BaselineActivities = typeof baselineActivities;
