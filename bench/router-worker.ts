/**
 * Front door for `npm run bench:webhooks`. `wrangler dev` exposes only its first worker, so
 * this one forwards `/floor/*` to the floor worker and everything else to the coordinator:
 * both measured routes take the same one service-binding hop inside the same workerd.
 */
interface RouterEnv {
  COORDINATOR: Fetcher;
  FLOOR: Fetcher;
}

export default {
  fetch(req: Request, env: RouterEnv): Promise<Response> {
    return new URL(req.url).pathname.startsWith("/floor/") ? env.FLOOR.fetch(req) : env.COORDINATOR.fetch(req);
  },
} satisfies ExportedHandler<RouterEnv>;
