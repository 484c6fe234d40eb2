/**
 * Regenerates node-core/client/api-routes.generated.ts, the client's route types, from the OpenAPI
 * documents of a fresh node (temp data directory, loopback, no peers):
 *
 *   npm run gen:client-routes
 *
 * test/integration/client-route-types.test.ts runs the same generation and fails when the committed file
 * differs, so a route table change without a regenerated client does not pass CI.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { generateRouteTypes, type OpenApiLike } from '../node-core/client/codegen.ts';
import { withScratchNode } from './scratch-node.ts';

export const GENERATED_PATH = fileURLToPath(
  new URL('../node-core/client/api-routes.generated.ts', import.meta.url),
);

/** The two OpenAPI documents as a running node serves them. */
export async function fetchOpenApi(baseUrl: string): Promise<{ node: OpenApiLike; proxy: OpenApiLike }> {
  const get = async (path: string): Promise<OpenApiLike> => {
    const r = await fetch(`${baseUrl}${path}`);
    if (!r.ok) throw new Error(`GET ${path}: HTTP ${r.status}`);
    return (await r.json()) as OpenApiLike;
  };
  return { node: await get('/openapi.json'), proxy: await get('/api/v1/openapi.json') };
}

/** The generated module, formatted as the repository's prettier settings format it. */
export async function renderClientRoutes(docs: { node: OpenApiLike; proxy: OpenApiLike }): Promise<string> {
  const text = generateRouteTypes(docs.node, docs.proxy);
  const config = (await prettier.resolveConfig(GENERATED_PATH)) ?? {};
  return prettier.format(text, { ...config, filepath: GENERATED_PATH });
}

async function main(): Promise<void> {
  await withScratchNode('gen-client-routes', {}, async (node) => {
    writeFileSync(GENERATED_PATH, await renderClientRoutes(await fetchOpenApi(node.url)));
    process.stdout.write(`wrote ${GENERATED_PATH}\n`);
  });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
