package io.lockwatch.audit;

import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;

/**
 * A request's fields as the audit log keeps them: every value of a field whose name says it holds a secret, and every
 * string that looks like one of lockwatch's own secrets wherever it is, replaced by {@value #REDACTED}. The names
 * stay, so the log tells that a secret was set, never what it was. Strings are cut at 256 characters and arrays at
 * 100 items: the log says what changed, it is not a copy of the request.
 */
final class Redaction {

    static final String REDACTED = "[redacted]";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Field names that hold a credential, in any case and with any separator. */
    private static final Pattern SECRET_NAME = Pattern.compile(
            "link|.*(secret|password|passwd|passphrase|token|api_?key|private_?key|authorization).*");
    /**
     * Client keys (lwc_), portal links (lwp_), device secrets (lwd_), webhook secrets (whsec_), bearer values and JWTs,
     * anywhere in a string.
     */
    private static final Pattern SECRET_VALUE = Pattern.compile("(?i)(lwc_|lwp_|lwd_|whsec_|bearer\\s)|eyJ[\\w-]+\\.[\\w-]+\\.");
    /** A URL's user information and query: where a URL carries credentials, if it carries any. */
    private static final Pattern URL_CREDENTIALS = Pattern.compile("^([a-zA-Z][a-zA-Z0-9+.-]*://)([^/@?#]*@)?([^?#]*)([?#].*)?$");
    private static final int MAX_STRING = 256, MAX_ITEMS = 100;

    private Redaction() {
    }

    /** The JSON text of the fields of a JSON body, redacted; null when the body is empty or not JSON. */
    static String fields(byte[] body) {
        if (body == null || body.length == 0) {
            return null;
        }
        JsonNode tree;
        try {
            tree = JSON.readTree(body);
        } catch (java.io.IOException e) {
            return null;
        }
        return tree == null || tree.isMissingNode() ? null : redacted(tree, false).toString();
    }

    /** A JSON object of these plain values (no redaction needed: the service chose them). */
    static String of(Map<String, ?> values) {
        return JSON.valueToTree(values).toString();
    }

    static JsonNode redacted(JsonNode node, boolean secretByName) {
        if (node.isObject()) {
            ObjectNode copy = JSON.createObjectNode();
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                copy.set(field.getKey(), redacted(field.getValue(), secretName(field.getKey())));
            }
            return copy;
        }
        if (node.isArray()) {
            ArrayNode copy = JSON.createArrayNode();
            int n = 0;
            for (JsonNode item : node) {
                if (n++ == MAX_ITEMS) {
                    copy.add("[" + (node.size() - MAX_ITEMS) + " more]");
                    break;
                }
                copy.add(redacted(item, secretByName));
            }
            return copy;
        }
        if (node.isNull()) {
            return node;
        }
        if (secretByName) {
            return TextNode.valueOf(REDACTED);
        }
        if (node.isTextual()) {
            String text = node.asText();
            if (SECRET_VALUE.matcher(text).find()) {
                return TextNode.valueOf(REDACTED);
            }
            java.util.regex.Matcher url = URL_CREDENTIALS.matcher(text);
            if (url.matches() && (url.group(2) != null || url.group(4) != null)) {
                // the scheme, host and path tell what changed; a user's password or a query's token need not be kept
                text = url.group(1) + (url.group(2) == null ? "" : REDACTED + "@") + url.group(3)
                        + (url.group(4) == null ? "" : "?" + REDACTED);
            }
            return TextNode.valueOf(text.length() > MAX_STRING ? text.substring(0, MAX_STRING) + "…" : text);
        }
        return node;
    }

    static boolean secretName(String name) {
        return SECRET_NAME.matcher(name.toLowerCase(Locale.ROOT).replace("-", "_")).matches();
    }
}
