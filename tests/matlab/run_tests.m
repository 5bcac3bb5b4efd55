% run_tests.m: poolkit's MATLAB interface tested in Octave. Run from the repository root after matlab/build.m:
%   octave-cli tests/matlab/run_tests.m
% Expected values come from PyTorch (fixtures.mat, made by make_fixtures.py), from hand-worked examples and from
% finite differences. Prints one line per test and 'N passed, M failed'; exits 1 on any failure.
1;
here = fileparts(mfilename('fullpath'));
addpath(fullfile(here, '..', '..', 'matlab'));
addpath(here);
tests = {@test_hand_6x6, @test_hand_avg, @test_fixtures, @test_round_trip, @test_gradients_fd, ...
         @test_bad_inputs, @test_indx_column, @test_large_window_compact, ...
         @test_linear_order, @test_linear_slabs, @test_linear_blocks, @test_compact_gather, @test_linear_forward, @test_entries_agree, ...
         @test_retain_memory};
passed = 0;
failed = 0;
for k = 1:numel(tests)
  name = func2str(tests{k});
  try
    tests{k}();
    passed = passed + 1;
    printf('PASS %s\n', name);
  catch err
    failed = failed + 1;
    printf('FAIL %s: %s\n', name, err.message);
  end
end
printf('%d passed, %d failed\n', passed, failed);
exit(failed > 0);
