// How a definition problem is recorded: the file, line and path it points at, and the fault.
import type { SourcedDefinition } from './load.js';

export interface Check {
  problems: string[];
  source: SourcedDefinition;
}

export function problem(check: Check, at: Array<string | number>, fault: string) {
  check.problems.push(`${check.source.locate(at)}: ${fault}`);
}
