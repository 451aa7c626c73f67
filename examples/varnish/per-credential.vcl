vcl 4.1;

# Varnish in front of the service, keeping some authenticated answers for a
# few seconds, one copy per credential (docs/operation.md: HTTP caches). The service marks
# every such answer `Cache-Control: private, no-store`, which Varnish's builtin
# VCL obeys; this file overrides that for the paths it names, and nothing else.
# The price: for up to the TTL a caller may be answered after their session
# ended or their key was rotated, and may not see their own latest upload.
# test/security/shared-cache.test.ts runs this file.

backend default {
    .host = "127.0.0.1";
    .port = "4000";
}

sub vcl_recv {
    # Only reads are kept. (The builtin VCL, which runs after this, passes
    # requests carrying Authorization: API keys are never kept.)
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
}

sub vcl_hash {
    # One copy per caller: every request header that can change who the caller
    # is. Varnish also honours the service's Vary, which names the same
    # headers; keying on them here keeps that true if a Vary is ever lost.
    # List your SESSION_TOKEN_HEADERS if you changed them.
    hash_data(req.http.SVC-Token);
    hash_data(req.http.QB-Token);
    hash_data(req.http.Authorization);
    hash_data(req.http.On-Behalf-Of);
}

sub vcl_backend_response {
    # Successful reads of these paths only: errors (401, 403, 429…) and every
    # other path keep the service's no-store, through the builtin VCL.
    if (beresp.status == 200 && bereq.url ~ "^/(address_book/registered_users\.json|users/external/[0-9]+\.json|graphql\?)") {
        set beresp.ttl = 10s;
        set beresp.grace = 0s;
        return (deliver);
    }
}
