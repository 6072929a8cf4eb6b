// A kernel that launches a kernel of another translation unit (rdc.cu): in launcher.cu's
// -dc object `launched` is an undefined entry symbol, not a kernel of that object.
extern __global__ void launched(int* p);

__global__ void launcher(int* p) { launched<<<1, 32>>>(p); }

void launch_launcher(int* p) { launcher<<<1, 1>>>(p); }

int main() { return 0; }
