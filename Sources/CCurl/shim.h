#ifndef TANDEM_CCURL_SHIM_H
#define TANDEM_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic: Swift cannot call them directly.
static inline CURLcode tandem_curl_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode tandem_curl_setopt_off(CURL *curl, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode tandem_curl_setopt_pointer(CURL *curl, CURLoption option, void *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode tandem_curl_setopt_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}
typedef size_t (*tandem_curl_data_callback)(char *data, size_t size, size_t count, void *context);
static inline CURLcode tandem_curl_setopt_data_callback(CURL *curl, CURLoption option, tandem_curl_data_callback callback) {
    return curl_easy_setopt(curl, option, callback);
}
typedef int (*tandem_curl_progress_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
static inline CURLcode tandem_curl_setopt_progress_callback(CURL *curl, tandem_curl_progress_callback callback) {
    return curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, callback);
}
static inline CURLcode tandem_curl_response_code(CURL *curl, long *code) {
    return curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, code);
}
#endif
