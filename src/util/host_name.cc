#include "util/host_name.h"

#include <unistd.h>

namespace podtopo {

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

}  // namespace podtopo
