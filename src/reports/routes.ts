import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { action } from "../http/envelope.ts";
import { FiscalizationReport } from "./schema.ts";
import type { ReportService } from "./service.ts";

export function reportRoutes(deps: { reports: ReportService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      "/api/v1/einvoice/report-fiscalization",
      {
        schema: { body: FiscalizationReport },
        config: { handler: "invoice.report_fiscalization", failureMessage: "Failed to submit report" },
      },
      async (request) => {
        await deps.reports.submit(request.principal, request.body);
        return action("Report submitted successfully", []);
      },
    );
  };
}
