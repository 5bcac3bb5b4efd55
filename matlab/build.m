% build.m: builds poolkit's MEX file (+poolkit/pkmex) with whichever of MATLAB's `mex` or Octave's
% `mkoctfile --mex` runs this script, against the poolkit C++ library. Run it once from the repository root:
%   octave --eval "run('matlab/build.m')"      or, in MATLAB,   run('matlab/build.m')
% then addpath('matlab') is all a user needs.
% The library (libpoolkit.a and its headers): the build directory named by the environment variable
% POOLKIT_BUILD_DIR (a relative path from the repository root), else the first of build/release, build/dev,
% build/matlab (under the repository root) that holds src/libpoolkit.a; when there is none, cmake configures and
% builds the library in build/matlab (CPU only, no tests). It needs Highway (libhwy) and OpenMP (libgomp), as the
% library does.
pk_here = fileparts(mfilename('fullpath'));
pk_root = fileparts(pk_here);
pk_lib = getenv('POOLKIT_BUILD_DIR');
if ~isempty(pk_lib) && ~any(pk_lib(1) == '/\') && isempty(regexp(pk_lib, '^[A-Za-z]:', 'once'))
  pk_lib = fullfile(pk_root, pk_lib);  % a relative path names a folder under the repository root
end
if isempty(pk_lib)
  for pk_dir = {'release', 'dev', 'matlab'}
    if exist(fullfile(pk_root, 'build', pk_dir{1}, 'src', 'libpoolkit.a'), 'file')
      pk_lib = fullfile(pk_root, 'build', pk_dir{1});
      break;
    end
  end
end
if isempty(pk_lib)
  pk_lib = fullfile(pk_root, 'build', 'matlab');
  fprintf('build.m: no poolkit build found; building the library in %s\n', pk_lib);
  pk_status = system(sprintf(['cmake -S "%s" -B "%s" -DCMAKE_BUILD_TYPE=Release -DPOOLKIT_WITH_CUDA=OFF ' ...
                              '-DPOOLKIT_BUILD_TESTS=OFF && cmake --build "%s" --target poolkit poolkit_cli -j2'], ...
                             pk_root, pk_lib, pk_lib));
  if pk_status ~= 0, error('poolkit:build', 'cmake could not build the poolkit library in %s', pk_lib); end
end
fprintf('build.m: linking against %s\n', fullfile(pk_lib, 'src', 'libpoolkit.a'));
pk_src = fullfile(pk_here, 'src', {'pkmex.cpp', 'mx_args.cpp', 'pool_plan.cpp', 'window_index.cpp', ...
                                 'linear_rows.cpp', 'block_scatter.cpp', 'retain_memory.cpp'});
pk_flags = {['-I' fullfile(pk_root, 'include')], ['-L' fullfile(pk_lib, 'src')], '-lpoolkit', '-lhwy', '-lgomp', ...
            '-lpthread'};
pk_out = fullfile(pk_here, '+poolkit', 'pkmex');
if exist('OCTAVE_VERSION', 'builtin')
  % Octave: pkmex.oct, the same source over Octave's own arrays (pkmex_oct.cpp; Octave's MEX layer would copy
  % every output once more), and the MEX entry as pkmex_mex.mex, which the tests hold to the same results.
  pk_cxx = getenv('CXXFLAGS');
  setenv('CXXFLAGS', [strtrim(mkoctfile('-p', 'CXXFLAGS')) ' -std=c++20 -O2 -fopenmp -Wno-deprecated']);  % (Octave 7's headers under C++20)
  pk_cwd = pwd;
  cd(tempdir);  % mkoctfile leaves its object files in the current folder
  try
    mkoctfile('-DPKMEX_OCTAVE', pk_flags{:}, pk_src{:}, fullfile(pk_here, 'src', 'mx_octave.cpp'), ...
              fullfile(pk_here, 'src', 'pkmex_oct.cpp'), '-o', [pk_out '.oct']);
    mkoctfile('--mex', pk_flags{:}, pk_src{:}, '-o', [pk_out '_mex.mex']);
  catch pk_err
    cd(pk_cwd); setenv('CXXFLAGS', pk_cxx); rethrow(pk_err);
  end
  cd(pk_cwd);
  setenv('CXXFLAGS', pk_cxx);
else
  mex('-outdir', fileparts(pk_out), '-output', 'pkmex', 'CXXFLAGS=$CXXFLAGS -std=c++20 -O2 -fopenmp', ...
      pk_flags{:}, pk_src{:});
end
fprintf('build.m: built %s\n', pk_out);
clear -regexp ^pk_
