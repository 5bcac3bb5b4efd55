function test_indx_column()
%TEST_INDX_COLUMN  maxunpool and the backwards take indx as a column too (older MATLAB releases), and a
% trailing singleton batch ('SSCB' data of size [4 4 2]) keeps its format.
randn('seed', 3);
X = randn(4, 4, 2);
[Y, I, s] = poolkit.maxpool(X, 2, 'Stride', 2, 'DataFormat', 'SSCB');
check(isequal(size(Y), [2 2 2]) && isequal(s, [4 4 2]), 'sizes %s %s', mat2str(size(Y)), mat2str(s));
check(isequal(poolkit.maxunpool(Y(:), I(:), s), poolkit.maxunpool(Y, I, s)), 'maxunpool with a column');
check(isequal(poolkit.maxpool_backward(Y(:), I(:), s), poolkit.maxunpool(Y, I, s)), 'maxpool_backward with a column');
check(isequal(poolkit.maxunpool_backward(X, I(:)), X(I(:))), 'maxunpool_backward with a column');
end
