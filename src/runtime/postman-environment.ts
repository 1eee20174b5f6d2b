/** What a Postman environment for this API holds: where it answers, and the business's credentials. */
export type PostmanValues = {
  baseUrl: string;
  business_id: string;
  service_id: string;
  api_key: string;
  api_secret: string;
};

/**
 * A Postman environment (v2.1 export format) for the collection in postman/: the committed template
 * (empty credentials) and the one the sandbox writes beside sandbox-credentials.json (filled), so
 * that importing both gives requests that answer. The secret is typed `secret`, which Postman masks.
 */
export function postmanEnvironment(
  name: string,
  values: PostmanValues | Record<string, string>,
  // One id for every copy: importing a newer one replaces the older instead of adding a second.
  id = "8d6f5a52-0e1b-4c9a-9c55-6e3f0b7a2d41",
) {
  return {
    id,
    name,
    values: Object.entries(values).map(([key, value]) => ({
      key,
      value,
      type: /secret/.test(key) ? "secret" : "default",
      enabled: true,
    })),
    _postman_variable_scope: "environment",
  };
}
