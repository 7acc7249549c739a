// Types of scripts/dist.js, for the tests and the bench that ask whether dist/ is current.
export declare const ROOT: string;
export declare const DIST: string;
export declare const ENTRY: string;
export declare const STAMP: string;
export declare function buildInputs(): string[];
export declare function assets(inputs: string[]): string[];
export declare function distProblem(): string | undefined;
