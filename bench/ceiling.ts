/**
 * The ceiling: a bare Fastify route on the same machine that parses the same JSON body and answers
 * a small JSON. What the service does beyond this is the cost of the service itself.
 *   PORT=9999 tsx bench/ceiling.ts
 */
import Fastify from "fastify";

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
app.post("/echo", async (request) => ({
  status: true,
  code: 200,
  received: Object.keys(request.body as object).length,
}));
const address = await app.listen({ port: Number(process.env.PORT ?? 9999), host: "127.0.0.1" });
process.stdout.write(`${address}\n`);
