// The start's rebuild decision: unchanged inputs are up to date, any change to one is not.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_INPUTS, bundleInputsHash, bundlesUpToDate, writeBundleStamp } from '../../lib/local/bundle-freshness.ts';

describe('bundle freshness', () => {
  test('a stamp of the same inputs is up to date; a changed, added or removed input, or a missing bundle, is not', async () => {
    const root = await mkdtemp(join(tmpdir(), 'museum-freshness-'));
    try {
      await mkdir(join(root, 'functions/shared'), { recursive: true });
      await mkdir(join(root, 'scripts/lambda-shims'), { recursive: true });
      await writeFile(join(root, 'functions/a.ts'), 'export const a = 1;\n');
      await writeFile(join(root, 'functions/shared/b.ts'), 'export const b = 1;\n');
      await writeFile(join(root, 'scripts/build.ts'), '// build\n');
      await writeFile(join(root, 'package-lock.json'), '{}\n');
      const outdir = join(root, 'dist/functions');
      await mkdir(join(outdir, 'a'), { recursive: true });
      await writeFile(join(outdir, 'a/index.mjs'), '');
      const first = await bundleInputsHash(root);
      expect(await bundlesUpToDate(outdir, ['a'], first)).toBe(false); // never stamped
      await writeBundleStamp(outdir, first);
      expect(await bundlesUpToDate(outdir, ['a'], await bundleInputsHash(root))).toBe(true);
      expect(await bundlesUpToDate(outdir, ['a', 'missing'], first)).toBe(false);

      await writeFile(join(root, 'functions/shared/b.ts'), 'export const b = 2;\n');
      expect(await bundleInputsHash(root)).not.toBe(first);
      await writeFile(join(root, 'functions/shared/b.ts'), 'export const b = 1;\n');
      expect(await bundleInputsHash(root)).toBe(first);
      await writeFile(join(root, 'scripts/lambda-shims/new.ts'), '');
      expect(await bundleInputsHash(root)).not.toBe(first);
      await rm(join(root, 'scripts/lambda-shims/new.ts'));
      await writeFile(join(root, 'package-lock.json'), '{"changed":true}\n');
      expect(await bundleInputsHash(root)).not.toBe(first);
      expect(BUNDLE_INPUTS).toEqual(expect.arrayContaining(['functions', 'scripts/build.ts', 'package-lock.json']));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
