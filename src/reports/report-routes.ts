import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { action, withWarnings } from "../http/envelope.ts";
import { EXAMPLES } from "../http/examples.ts";
import { Action, Empty, responses } from "../http/openapi.ts";
import { FiscalizationReport } from "./report-schema.ts";
import type { ReportService } from "./report-service.ts";

export function reportRoutes(deps: { reports: ReportService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      "/api/v1/einvoice/report-fiscalization",
      {
        schema: {
          summary: "Report a fiscalized invoice with its tax details",
          tags: ["reports"],
          body: { ...FiscalizationReport, examples: [EXAMPLES.report] },
          response: responses(
            Action(Empty, "Report submitted successfully"),
            "the report is stored",
            [400, 401, 404, 429, 503],
          ),
        },
        config: { handler: "invoice.report_fiscalization", failureMessage: "Failed to submit report" },
      },
      async (request) => {
        const { warnings } = await deps.reports.submit(request.principal, request.body);
        return withWarnings(action("Report submitted successfully", []), warnings);
      },
    );
  };
}
