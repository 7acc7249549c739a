// A download as fast as the client reads, with the server's memory sampled meanwhile: every
// process of the server (a cluster's workers too), every 50 ms; the figures are those of the
// process that grew most (the one that served the download).
import { download } from './lib/http.js';
import { RssSampler, toMB } from './lib/processes.js';

const SAMPLE_MS = 50;

export interface ExportFigures {
  path: string;
  rows: number;
  megabytes: number;
  seconds: number;
  beforeMB: number;
  peakMB: number;
  growthMB: number;
}

/** `record`: what ends one row (CSV: a line; JSON: an object's start); `headerRecords` are not rows. */
export async function measureExport(base: string, pid: number, url: string, token: string, record: string | undefined = '\r\n', headerRecords = 1): Promise<ExportFigures> {
  const sampler = new RssSampler(pid, SAMPLE_MS);
  const started = performance.now();
  try {
    const { bytes, records } = await download(base, url, token, record === undefined ? undefined : Buffer.from(record));
    const seconds = (performance.now() - started) / 1000;
    sampler.stop();
    const grown = sampler.report().sort((a, b) => b.peakMB - b.beforeMB - (a.peakMB - a.beforeMB))[0];
    return {
      path: url,
      rows: record === undefined ? 0 : records - headerRecords,
      megabytes: toMB(bytes),
      seconds: Math.round(seconds * 10) / 10,
      beforeMB: grown.beforeMB,
      peakMB: grown.peakMB,
      growthMB: Math.round((grown.peakMB - grown.beforeMB) * 10) / 10,
    };
  } finally {
    sampler.stop();
  }
}
